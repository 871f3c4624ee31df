import { definePlugin, HttpRouterRef, Permissions } from '@runner/plugin-sdk';
import { findUiDir } from './ui-dir.js';
import { routes } from './api.js';

export const plugin = definePlugin({
  id: 'ui',
  version: '0.1.0',
  routes,
  description:
    'The web UI at / on the HTTP port (runner ui, runner server), and GET /api/v1/config for its settings page',
  profiles: ['master'],
  dependsOn: { router: HttpRouterRef },
  config: {
    'ui.dir': {
      schema: { type: 'string' },
      default: '',
      help: 'directory of a built web UI to serve at / (default: the one built with this runner)',
    },
  },
  async setup(ctx, { router }) {
    // Loaded here, not at import: every command imports every plugin's entry, and the routes bring
    // TypeBox (a one-task `runner run` never needs it).
    const { registerConfigRoute } = await import('./config-route.js');
    registerConfigRoute(router, ctx);
    const found = findUiDir(ctx.config.get<string>('ui.dir') || undefined, import.meta.url);
    if ('missing' in found) {
      ctx.logger.warn(`the web UI is not served: ${found.missing}`);
      return;
    }
    // The page shell and its hashed assets are public: they hold no data, and the login page is
    // among them. Every call the UI makes goes to /api/v1, where the routes' permissions apply.
    router.mountStatic({
      prefix: '/',
      dir: found.dir,
      spaFallback: 'index.html',
      immutablePrefix: '/_app/immutable/',
      permission: Permissions.public,
    });
    ctx.logger.debug(`web UI served at / from ${found.dir}`);
  },
});

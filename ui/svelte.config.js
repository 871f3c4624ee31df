import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** @type {import('@sveltejs/kit').Config} */
export default {
  preprocess: vitePreprocess(),
  kit: {
    // A single-page app: the master serves index.html for every path that is not a file
    // (plugins/ui mounts ui/build with spaFallback), so no page is prerendered.
    adapter: adapter({ pages: 'build', assets: 'build', fallback: 'index.html', strict: true }),
    // The UI talks only to its own origin (/api/v1) and loads nothing from elsewhere.
    csp: {
      mode: 'hash',
      directives: {
        'default-src': ['self'],
        'script-src': ['self'],
        'style-src': ['self', 'unsafe-inline'],
        'img-src': ['self', 'data:'],
        'connect-src': ['self'],
        'object-src': ['none'],
        'base-uri': ['self'],
      },
    },
  },
};

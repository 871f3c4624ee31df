import { AgentTerminalsRef, definePlugin, HttpRouterRef, optional, SshProfilesRef } from '@runner/plugin-sdk';
import { routes } from './api.js';
import { terminalCommand } from './commands.js';

/**
 * The terminal: shells on agents' hosts (a PTY on the agent, over its gRPC connection) or through
 * SSH profiles, served at /api/v1/terminal/sessions and their sockets (a WebSocket route of the
 * http plugin), `runner terminal`, and the /terminal page. Opening one needs `terminal:open`; the
 * start and end of every session are audited (terminal.opened / terminal.closed).
 */
export const plugin = definePlugin({
  id: 'terminal',
  version: '0.1.0',
  routes,
  description: "Terminal: interactive shells on agents' hosts or through SSH profiles, with file upload and download",
  profiles: ['master'],
  dependsOn: {
    router: HttpRouterRef,
    agents: optional(AgentTerminalsRef),
    ssh: optional(SshProfilesRef),
  },
  commands: [terminalCommand],
  async setup(ctx, { router, agents, ssh }) {
    const [{ TerminalSessions }, { registerTerminalRoutes }] = await Promise.all([
      import('./sessions.js'),
      import('./routes.js'),
    ]);
    const sessions = new TerminalSessions({
      agents,
      ssh,
      events: ctx.events,
      logger: ctx.logger,
      redactor: ctx.redactor,
      track: (principal, end) => router.trackPrincipal(principal, end),
    });
    registerTerminalRoutes(router, sessions);
    return { stop: () => sessions.closeAll('the master is stopping') };
  },
});

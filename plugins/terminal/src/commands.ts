import { connectMaster, type CommandSpec, type MasterClient } from '@runner/plugin-sdk';
import type { TerminalView } from './sessions.js';

/** Where a session's socket is, from the master's WebSocket address (`.../api/v1/ws`). */
async function socketOf(master: MasterClient, id: string) {
  const { url, headers, tls } = await master.webSocket();
  return { url: url.replace(/\/ws$/, `/terminal/sessions/${encodeURIComponent(id)}/socket`), headers, tls };
}

/**
 * `runner terminal <agent | agent:name | ssh:profile>`: a shell on the remote host in this
 * terminal, in raw mode (Ctrl-C goes to the remote shell); the window's size follows this one.
 * Ends with the remote shell's exit code.
 */
export const terminalCommand: CommandSpec = {
  name: 'terminal',
  description: "open a shell on an agent's host or through an SSH profile (needs terminal:open)",
  arguments: [{ name: 'target', description: 'an agent name, agent:<name> or ssh:<profile>', required: true }],
  options: [{ flags: '--master-url <url>', description: 'the master to ask (default: as configured)' }],
  run: async (input, ctx) => {
    const master = await connectMaster(ctx, input.options.masterUrl);
    const stdout = process.stdout;
    const size = { rows: stdout.rows || 24, cols: stdout.columns || 80 };
    const session = await master.call<TerminalView>('POST', '/terminal/sessions', {
      body: { target: input.args[0], ...size },
    });
    const { WebSocket } = await import('ws');
    const { url, headers, tls } = await socketOf(master, session.id);
    const ws = new WebSocket(url, { headers, ...(tls ?? {}) });
    const stdin = process.stdin;
    const raw = stdin.isTTY === true;
    let code = 0;
    return new Promise<number>((resolve, reject) => {
      const restore = () => {
        if (raw) stdin.setRawMode(false);
        stdin.pause();
        stdout.off('resize', onResize);
      };
      const onResize = () =>
        ws.send(JSON.stringify({ type: 'resize', rows: stdout.rows || 24, cols: stdout.columns || 80 }));
      ws.once('open', () => {
        if (raw) stdin.setRawMode(true);
        stdin.resume();
        stdin.on('data', (data: Buffer) => ws.send(data, { binary: true }));
        // A pipe ending is the end of input: the remote shell is told (Ctrl-D).
        stdin.once('end', () => ws.send(Buffer.from([4]), { binary: true }));
        stdout.on('resize', onResize);
      });
      ws.on('message', (data: Buffer, binary: boolean) => {
        if (binary) return void ctx.stdout.write(data);
        const message = JSON.parse(data.toString()) as { type: string; code?: number | null; reason?: string };
        if (message.type === 'exit') code = message.code ?? 1;
      });
      ws.once('error', (error) => {
        restore();
        reject(error);
      });
      ws.once('close', (closeCode, reason) => {
        restore();
        if (closeCode !== 1000 && closeCode !== 1005)
          ctx.stderr.write(`\r\nrunner: terminal closed: ${reason.toString() || closeCode}\n`);
        resolve(code);
      });
    });
  },
};

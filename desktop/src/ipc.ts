// The main-process side of the bridge. Every call is checked twice: it must come from a page of
// the master the window shows (not from a page that navigated elsewhere, which the navigation
// lock should prevent anyway), and its arguments must have the shape the bridge sends.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { CHANNELS, parseRunFailure, type ConnectionInfo, type WorkflowFile } from './bridge.js';
import type { ElectronFacade, IpcCaller, WindowFacade } from './facade.js';

/** A workflow file larger than this is not a workflow: refused before it is read. */
export const MAX_WORKFLOW_BYTES = 1024 * 1024;

export interface IpcDependencies {
  facade: Pick<ElectronFacade, 'ipcMain' | 'dialog' | 'notify'>;
  /** The origin of the master the window shows, if one is loaded. */
  masterOrigin(): string | undefined;
  window(): WindowFacade | undefined;
  chooseConnection(): Promise<ConnectionInfo | null>;
  showWindow(): void;
}

function checkCaller(channel: string, caller: IpcCaller, origin: string | undefined): void {
  let callerOrigin: string | undefined;
  try {
    callerOrigin = caller.senderUrl ? new URL(caller.senderUrl).origin : undefined;
  } catch {
    callerOrigin = undefined;
  }
  if (origin === undefined || callerOrigin !== origin) {
    throw new Error(
      `${channel}: refused a call from ${caller.senderUrl ?? 'an unknown frame'}: only ${origin ?? 'the master'} may call`,
    );
  }
}

function noArguments(channel: string, args: unknown[]): void {
  if (args.length > 0) throw new TypeError(`${channel}: takes no arguments, got ${args.length}`);
}

/** Reads the workflow file the user picked; refuses what is too large or not UTF-8 text. */
export async function readWorkflowFile(path: string): Promise<WorkflowFile> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error(`${path} is not a file`);
  if (info.size > MAX_WORKFLOW_BYTES) {
    throw new Error(`${path} is ${info.size} bytes; a workflow file may have at most ${MAX_WORKFLOW_BYTES}`);
  }
  const bytes = await readFile(path);
  const content = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  return { name: basename(path), path, content };
}

/** The notification for a failed run: the workflow in the title, the run id and the error's first line below. */
export function runFailedNotification(value: unknown): { title: string; body: string } {
  const failure = parseRunFailure(value);
  const firstLine = failure.message
    ?.split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
  const reason = firstLine ? `: ${firstLine.length > 200 ? `${firstLine.slice(0, 199)}…` : firstLine}` : '';
  return { title: `Run failed: ${failure.workflow}`, body: `Run ${failure.runId}${reason}` };
}

export function registerIpcHandlers(deps: IpcDependencies): void {
  const { ipcMain, dialog, notify } = deps.facade;
  ipcMain.handle(CHANNELS.chooseConnection, async (caller, ...args) => {
    checkCaller(CHANNELS.chooseConnection, caller, deps.masterOrigin());
    noArguments(CHANNELS.chooseConnection, args);
    return deps.chooseConnection();
  });
  ipcMain.handle(CHANNELS.openWorkflowFile, async (caller, ...args) => {
    checkCaller(CHANNELS.openWorkflowFile, caller, deps.masterOrigin());
    noArguments(CHANNELS.openWorkflowFile, args);
    const picked = await dialog.showOpenDialog(deps.window(), {
      title: 'Open workflow',
      properties: ['openFile'],
      filters: [
        { name: 'Workflows', extensions: ['yaml', 'yml'] },
        { name: 'All files', extensions: ['*'] },
      ],
    });
    if (picked.canceled || picked.filePaths.length === 0) return null;
    return readWorkflowFile(picked.filePaths[0]);
  });
  ipcMain.handle(CHANNELS.notifyRunFailed, async (caller, ...args) => {
    checkCaller(CHANNELS.notifyRunFailed, caller, deps.masterOrigin());
    if (args.length !== 1) throw new TypeError(`${CHANNELS.notifyRunFailed}: takes one argument, got ${args.length}`);
    notify(runFailedNotification(args[0]), deps.showWindow);
    return undefined;
  });
}

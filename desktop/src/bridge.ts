// The one thing the UI's pages get from the desktop app: `window.runnerDesktop`, three calls over
// IPC. The preload (preload.ts) hands this module Electron's contextBridge and ipcRenderer; pages
// receive only the functions below, never ipcRenderer, so a page cannot send on other channels.
// This file is bundled into the sandboxed preload, which may require nothing but `electron`:
// it imports types only.
import type { ConnectionInfo, RunFailure, RunnerDesktopBridge, WorkflowFile } from '@runner/plugin-sdk';

/** IPC channels, one per bridge call. */
export const CHANNELS = Object.freeze({
  chooseConnection: 'runner-desktop:choose-connection',
  openWorkflowFile: 'runner-desktop:open-workflow-file',
  notifyRunFailed: 'runner-desktop:notify-run-failed',
});

// The bridge's types are the SDK's (plugin-sdk/src/desktop-bridge.ts): the UI reads them there
// without importing this package's files.
export type { ConnectionInfo, RunFailure, RunnerDesktopBridge, WorkflowFile } from '@runner/plugin-sdk';

const LIMITS = { runId: 200, workflow: 300, message: 2000 } as const;

/**
 * Checks what a page sent for notifyRunFailed: an object with string runId and workflow and an
 * optional string message, within lengths a notification can show. Throws a TypeError naming
 * the field otherwise. Used by the main process on every call: the page is not trusted.
 */
export function parseRunFailure(value: unknown): RunFailure {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('notifyRunFailed: expected an object { runId, workflow, message? }');
  }
  const record = value as Record<string, unknown>;
  const unknownKeys = Object.keys(record).filter((k) => !['runId', 'workflow', 'message'].includes(k));
  if (unknownKeys.length > 0) throw new TypeError(`notifyRunFailed: unknown field ${unknownKeys.join(', ')}`);
  for (const field of ['runId', 'workflow'] as const) {
    const v = record[field];
    if (typeof v !== 'string' || v.trim() === '' || v.length > LIMITS[field]) {
      throw new TypeError(
        `notifyRunFailed: ${field} must be a non-empty string of at most ${LIMITS[field]} characters`,
      );
    }
  }
  const message = record.message;
  if (message !== undefined && (typeof message !== 'string' || message.length > LIMITS.message)) {
    throw new TypeError(`notifyRunFailed: message must be a string of at most ${LIMITS.message} characters`);
  }
  return {
    runId: record.runId as string,
    workflow: record.workflow as string,
    ...(message !== undefined ? { message } : {}),
  };
}

/** The parts of Electron's contextBridge and ipcRenderer the bridge uses. */
export interface ContextBridgeLike {
  exposeInMainWorld(key: string, api: unknown): void;
}
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
}

/** Puts `window.runnerDesktop` into the page's world. */
export function exposeBridge(contextBridge: ContextBridgeLike, ipcRenderer: IpcRendererLike): void {
  const bridge: RunnerDesktopBridge = {
    version: 1,
    chooseConnection: () => ipcRenderer.invoke(CHANNELS.chooseConnection) as Promise<ConnectionInfo | null>,
    openWorkflowFile: () => ipcRenderer.invoke(CHANNELS.openWorkflowFile) as Promise<WorkflowFile | null>,
    // Only the three fields cross, copied: a page cannot smuggle getters or prototypes into IPC.
    notifyRunFailed: async (failure) => {
      const { runId, workflow, message } = (failure ?? {}) as Partial<RunFailure>;
      await ipcRenderer.invoke(CHANNELS.notifyRunFailed, { runId, workflow, message });
    },
  };
  contextBridge.exposeInMainWorld('runnerDesktop', Object.freeze(bridge));
}

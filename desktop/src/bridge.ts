// The one thing the UI's pages get from the desktop app: `window.runnerDesktop`, three calls over
// IPC. The preload (preload.ts) hands this module Electron's contextBridge and ipcRenderer; pages
// receive only the functions below, never ipcRenderer, so a page cannot send on other channels.
// This file is bundled into the sandboxed preload, which may require nothing but `electron`:
// it imports types only.

/** IPC channels, one per bridge call. */
export const CHANNELS = Object.freeze({
  chooseConnection: 'runner-desktop:choose-connection',
  openWorkflowFile: 'runner-desktop:open-workflow-file',
  notifyRunFailed: 'runner-desktop:notify-run-failed',
});

/** A master the app can show: the embedded one (`id: 'embedded'`) or a saved remote one. */
export interface ConnectionInfo {
  id: string;
  name: string;
  url: string;
}

/** A workflow file the user picked in the native dialog. */
export interface WorkflowFile {
  /** The file name, e.g. deploy.yaml. */
  name: string;
  /** The absolute path, shown to the user and sent along when running it. */
  path: string;
  content: string;
}

/** What a failed run notification says. */
export interface RunFailure {
  runId: string;
  workflow: string;
  /** The run's error, shortened to its first line by the notification. */
  message?: string;
}

/** `window.runnerDesktop`, present only when the UI runs inside the desktop app. */
export interface RunnerDesktopBridge {
  readonly version: 1;
  /** Asks the user which master to show (native chooser); the window then loads it. Null if cancelled. */
  chooseConnection(): Promise<ConnectionInfo | null>;
  /** A native open dialog for a .yaml/.yml workflow; its content, or null if cancelled. */
  openWorkflowFile(): Promise<WorkflowFile | null>;
  /** A native notification that a run failed; clicking it brings the window forward. */
  notifyRunFailed(failure: RunFailure): Promise<void>;
}

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

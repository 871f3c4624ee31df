// `window.runnerDesktop`, the desktop app's bridge as the web UI sees it. Types only: the desktop
// app (desktop/src/bridge.ts) implements it, the UI (ui/src/lib/desktop.ts) calls it, and neither
// imports the other's files.

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

import type { RunnerDesktopBridge } from '../../../desktop/src/bridge';

/**
 * The desktop app's bridge (`window.runnerDesktop`, desktop/src/bridge.ts), present only when the
 * UI runs inside it: desktop-only actions show when it is there.
 */
export const desktop: RunnerDesktopBridge | undefined = (window as { runnerDesktop?: RunnerDesktopBridge })
  .runnerDesktop;

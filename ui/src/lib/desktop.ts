import type { RunnerDesktopBridge } from '@runner/plugin-sdk';

/**
 * The desktop app's bridge (`window.runnerDesktop`, typed in plugin-sdk/src/desktop-bridge.ts), present only when the
 * UI runs inside it: desktop-only actions show when it is there.
 */
export const desktop: RunnerDesktopBridge | undefined = (window as { runnerDesktop?: RunnerDesktopBridge })
  .runnerDesktop;

// The window's preload: runs sandboxed, in an isolated world, before the page. It gives the page
// `window.runnerDesktop` (bridge.ts) and nothing else; ipcRenderer itself stays here.
import { contextBridge, ipcRenderer } from 'electron';
import { exposeBridge } from './bridge.js';

exposeBridge(contextBridge, ipcRenderer);

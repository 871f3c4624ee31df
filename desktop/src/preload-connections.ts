// The connections window's preload: `window.runnerConnections` (connections-bridge.ts), nothing else.
import { contextBridge, ipcRenderer } from 'electron';
import { exposeConnectionsBridge } from './connections-bridge.js';

exposeConnectionsBridge(contextBridge, ipcRenderer);

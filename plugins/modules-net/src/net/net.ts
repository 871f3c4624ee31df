import type { LuaModuleImplementation } from '@runner/plugin-sdk';
import { download } from './download.js';
import { httpGet, httpPost } from './http.js';
import { lookup } from './lookup.js';
import { portOpen, waitForPort } from './ports.js';
import type { NetFunction } from './spec.js';

/** The implementation of the `net` module; loaded by setup, so `runner --help` never imports it. */
export function createNetModule(): LuaModuleImplementation<NetFunction> {
  return {
    get: (call, url, opts) => httpGet(call, url, opts),
    post: (call, url, body, opts) => httpPost(call, url, body, opts),
    download: (call, url, dest, opts) => download(call, url, dest, opts),
    port_open: (call, host, port, timeout) => portOpen(call, host, port, timeout),
    wait_for_port: (call, host, port, opts) => waitForPort(call, host, port, opts),
    lookup: (call, name, opts) => lookup(call, name, opts),
  };
}

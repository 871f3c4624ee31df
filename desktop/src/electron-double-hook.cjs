// `node --require desktop/src/electron-double-hook.cjs desktop/dist/main.cjs`: resolves
// `electron` to the stand-in beside this file, so the real package (whose index.js downloads
// Electron's binary) is never loaded.
/* global require, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded by node --require, CommonJS */
const Module = require('node:module');
const { join } = require('node:path');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? join(__dirname, 'electron-double.cjs') : resolveFilename.call(this, request, ...rest);
};

import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `goroutine` module: `runner modules info goroutine` prints it. */
export const goroutineModule = defineLuaModule({
  name: 'goroutine',
  description: 'Run Lua functions concurrently: parallel, spawn/wait, sleep',
  docs: `
Each function runs in a coroutine of its own. They overlap while they wait: on exec.run, network
calls, goroutine.sleep and other module functions that wait for something. Lua code that only
computes does not run faster: there is one Lua thread. A raised error stays inside its goroutine
until parallel or wait reports it; nothing is lost or raised twice.
Durations are "250ms", "5s", "2m", "1.5h" or a number of seconds.
Handles from spawn live in this runner process until waited for; at most 10000 finished
goroutines that nobody waited for are kept (the oldest are forgotten first).`,
  functions: {
    parallel: {
      args: [{ name: 'fns', type: 'function[] | {tasks: function[], max_concurrent?: integer}' }],
      result: 'table',
      callsLua: true,
      description: `Runs the functions concurrently, at most max_concurrent at a time (default: all at once), and waits
for all of them. Returns a table of their first return values, in input order (results[i] is from
fns[i]; nil where a function returned nothing). If any raised, raises after all have ended, naming
each one that failed: "goroutine.parallel: task 2 failed: <message>". Functions not yet started
when the task is cancelled are not started.`,
      sideEffects: false,
      example: `local results = goroutine.parallel({
  tasks = {
    function() return exec.run("curl -fsS http://web-1/health").success end,
    function() return exec.run("curl -fsS http://web-2/health").success end,
  },
  max_concurrent = 2,
})
assert(results[1] and results[2], "a web node is unhealthy")`,
    },
    spawn: {
      args: [
        { name: 'fn', type: 'function' },
        { name: '...', type: 'any', optional: true },
      ],
      result: 'handle',
      callsLua: true,
      description: `Starts fn(...args) in the background and returns at once with a handle ({ id = n }) for
goroutine.wait. An error fn raises is kept for wait to report.`,
      sideEffects: false,
      example: `local h = goroutine.spawn(function(url) return exec.run({"curl", "-fsS", url}).stdout end, "http://api/ping")
-- ... other work ...
local body = goroutine.wait(h, "10s")`,
    },
    wait: {
      args: [
        { name: 'handle', type: 'handle' },
        { name: 'timeout', type: 'duration', optional: true },
      ],
      result: '...',
      // It runs until a Lua function of the script has ended: as unbounded as calling it.
      callsLua: true,
      description: `Waits for a spawned function to end and returns all its return values, or raises its error
("goroutine.wait: goroutine 3 failed: <message>"). With a timeout, raises
"goroutine.wait: goroutine 3 still running after 10s" when it passes; the goroutine keeps running
and can be waited for again. A handle that was waited for to the end cannot be waited for again.`,
      sideEffects: false,
      example: `local ok, out = goroutine.wait(h)`,
    },
    sleep: {
      args: [{ name: 'duration', type: 'string|number' }],
      result: 'nil',
      callsLua: false,
      description: `Suspends the calling coroutine for the duration; other goroutines and scripts keep running.
Raises when the task is cancelled meanwhile.`,
      sideEffects: false,
      example: `goroutine.sleep("500ms")
goroutine.sleep(2) -- seconds`,
    },
  },
});

export type GoroutineFunction = keyof typeof goroutineModule.functions;

import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `reliability` module: `runner modules info reliability` prints it. */
export const reliabilityModule = defineLuaModule({
  name: 'reliability',
  description: 'Retry with backoff, circuit breakers and time limits around Lua functions',
  docs: `
A function "fails" when it raises an error (use error(...), or assert); returning false is a normal
result. Durations are "250ms", "5s", "2m", "1.5h" or a number of seconds.
Circuit breakers live in the runner process: every script and run in it that uses the same name
shares one breaker, and they start closed again after a restart.`,
  functions: {
    retry: {
      args: [
        { name: 'opts', type: '{attempts?: integer, delay?: duration, backoff?: number, max_delay?: duration}' },
        { name: 'fn', type: 'function' },
      ],
      result: '...',
      callsLua: true,
      description: `Calls fn(attempt) until it returns without raising, at most attempts times (default 3), and returns
its return values. Between attempts it waits delay (default "1s") times backoff (default 2) to the
power of the retries so far, capped by max_delay: with the defaults 1s, 2s, 4s... Each failed
attempt is logged at warn. When every attempt failed it raises
"reliability.retry: failed after 3 attempts: <last error>". A cancelled task stops the waiting.`,
      sideEffects: false,
      example: `local body = reliability.retry({ attempts = 5, delay = "500ms", backoff = 2, max_delay = "5s" }, function(attempt)
  local r = exec.run({ "curl", "-fsS", "http://api.internal/ready" })
  if not r.success then error("api not ready (attempt " .. attempt .. "): " .. r.stderr) end
  return r.stdout
end)`,
    },
    circuit_breaker: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: '{max_failures?: integer, reset_timeout?: duration}' },
        { name: 'fn', type: 'function' },
      ],
      result: '...',
      callsLua: true,
      description: `Calls fn through the breaker called name and returns its results; fn's errors are raised unchanged.
After max_failures (default 5) consecutive failures the breaker opens: calls raise
"reliability.circuit_breaker: circuit \\"<name>\\" is open (...)" at once, without calling fn, until
reset_timeout (default "30s") has passed since it opened. Then one call is let through as a trial
(half-open; others still get the open error meanwhile): success closes the breaker, failure opens it
for another reset_timeout. A success in the closed state resets the failure count.`,
      sideEffects: false,
      example: `local ok, err = pcall(reliability.circuit_breaker, "payments-api", { max_failures = 3, reset_timeout = "1m" }, function()
  local r = exec.run("curl -fsS http://payments/api/charge")
  if not r.success then error(r.stderr) end
  return r.stdout
end)`,
    },
    circuit_state: {
      args: [{ name: 'name', type: 'string' }],
      result: '{state, failures, retry_in?}',
      callsLua: false,
      description: `The state of a breaker: state = "closed", "open" or "half_open", failures = consecutive failures
so far, and for an open breaker retry_in = seconds until a trial call is let through. A name never
used is closed with 0 failures.`,
      sideEffects: false,
      example: `if reliability.circuit_state("payments-api").state == "open" then log.warn("payments are down") end`,
    },
    timeout: {
      args: [
        { name: 'duration', type: 'string|number' },
        { name: 'fn', type: 'function' },
      ],
      result: '...',
      callsLua: true,
      description: `Calls fn and returns its results if it ends within duration; otherwise raises
"reliability.timeout: timed out after 2s". The caller goes on at once, but fn's coroutine cannot be
killed from here: it keeps running in the background until its current wait ends and it reaches its
end (its results and errors are then dropped); what it does meanwhile still happens. To bound a
command, give exec.run its own timeout, which kills the process.`,
      sideEffects: false,
      example: `local ok, err = pcall(reliability.timeout, "10s", function()
  return exec.run("pg_isready -h db").success
end)`,
    },
  },
});

export type ReliabilityFunction = keyof typeof reliabilityModule.functions;

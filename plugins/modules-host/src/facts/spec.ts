import { defineLuaModule } from '@runner/plugin-sdk';

/** The `facts` module's declaration: what `runner modules info facts` prints. Kept free of Node imports. */
export const factsModule = defineLuaModule({
  name: 'facts',
  description: 'Facts about the machine the task runs on: host, CPU, memory, disks, network',
  docs: `
Facts describe the machine that runs the script (the agent, or the master for local tasks).
Sizes are in bytes, percentages are 0-100 with two decimals, times are in seconds.
Each function's result is cached for 5 seconds per process (some facts spawn programs such as df),
so reading facts in a loop is cheap, and a value can be up to 5 seconds old; host().uptime is
always current. A value the system does not report is nil (e.g. cpu().speed_mhz on many VMs).
`,
  functions: {
    host: {
      args: [],
      result: 'table',
      callsLua: false,
      description: [
        'Returns {hostname, fqdn, platform ("linux", "darwin", "win32"...), distro ("Debian GNU/Linux"),',
        'release ("12"), codename, kernel ("6.1.0-18-amd64"), arch ("x64", "arm64"), timezone',
        '("Europe/Paris"), uptime (seconds since boot)}.',
      ].join('\n'),
      sideEffects: false,
      example: `
local h = facts.host()
log.info("running on " .. h.hostname .. " (" .. h.distro .. " " .. h.release .. ", " .. h.arch .. ")")`,
    },
    cpu: {
      args: [],
      result: 'table',
      callsLua: false,
      description: [
        'Returns {model, vendor, cores (logical), physical_cores, speed_mhz (nil when unknown),',
        'load1, load5, load15 (load averages; 0 on Windows), usage_percent}. usage_percent is the busy',
        'share of all cores measured over 250 ms when the fact is read, so an uncached call takes',
        'at least 250 ms.',
      ].join('\n'),
      sideEffects: false,
      example: `
local c = facts.cpu()
if c.load5 > c.cores * 2 then log.warn("overloaded", { load5 = c.load5, cores = c.cores }) end`,
    },
    memory: {
      args: [],
      result: 'table',
      callsLua: false,
      description: [
        'Returns {total, used, free, available, cached, usage_percent, swap_total, swap_used, swap_free}',
        'in bytes. available is what new programs can get; used = total - available (page cache the',
        'kernel can reclaim is not counted); free is memory not used at all; cached is buffers + page',
        'cache; usage_percent = used / total.',
      ].join('\n'),
      sideEffects: false,
      example: `
local m = facts.memory()
if m.available < 512 * 1024 * 1024 then error("less than 512 MiB of memory available") end`,
    },
    disks: {
      args: [],
      result: 'table[]',
      callsLua: false,
      description: [
        'Returns one table per mounted file system: {mount, device, type ("ext4", "xfs"...), size, used,',
        'available (bytes), usage_percent, read_only}. usage_percent is computed as df does',
        '(used / (used + available)), so blocks reserved for root count as neither.',
      ].join('\n'),
      sideEffects: false,
      example: `
for _, d in ipairs(facts.disks()) do
  if d.usage_percent > 90 then log.warn("disk almost full", { mount = d.mount, used = d.usage_percent }) end
end`,
    },
    network: {
      args: [],
      result: 'table[]',
      callsLua: false,
      description: [
        'Returns one table per network interface: {name, ipv4 (list of addresses), ipv6 (list,',
        'link-local ones included), mac, internal (true for loopback), state ("up", "down"...), default',
        '(true for the interface of the default route), type ("wired", "wireless", "virtual"), mtu,',
        'speed_mbps}. Fields the system does not report are nil.',
      ].join('\n'),
      sideEffects: false,
      example: `
for _, nic in ipairs(facts.network()) do
  if not nic.internal and nic.ipv4[1] then log.info(nic.name .. " has " .. nic.ipv4[1]) end
end`,
    },
    all: {
      args: [],
      result: 'table',
      callsLua: false,
      description: [
        'Returns {host, cpu, memory, disks, network}: each as its own function returns it,',
        'read concurrently (and from the same cache).',
      ].join('\n'),
      sideEffects: false,
      example: `
local f = facts.all()
state.set("inventory/" .. f.host.hostname, f, { scope = "global" })`,
    },
  },
});

export type FactsFunction = keyof typeof factsModule.functions;

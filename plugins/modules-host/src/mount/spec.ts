import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `mount` module. */
export const mountModule = defineLuaModule({
  name: 'mount',
  description: 'Mount and unmount filesystems, optionally kept in /etc/fstab',
  docs: `
What is mounted is read from /proc/self/mounts. mounted mounts source on target (creating the
target directory) unless that source is already mounted there; with persist = true it also keeps
the line "source target fstype options 0 0" in /etc/fstab (opts.fstab names another file).
unmounted unmounts target if something is mounted there, and with persist removes its fstab line.`,
  functions: {
    mounted: {
      args: [
        { name: 'source', type: 'string' },
        { name: 'target', type: 'string' },
        {
          name: 'opts',
          type: '{fstype?: string, options?: string, persist?: boolean, fstab?: string}',
          optional: true,
        },
      ],
      result: '{changed, target}',
      description: 'Mounts source on target unless it is mounted there (fstype auto, options defaults).',
      sideEffects: true,
      callsLua: false,
      example: `mount.mounted("/dev/vdb1", "/srv/data", { fstype = "ext4", options = "noatime", persist = true })`,
    },
    unmounted: {
      args: [
        { name: 'target', type: 'string' },
        { name: 'opts', type: '{persist?: boolean, fstab?: string}', optional: true },
      ],
      result: '{changed, target}',
      description: 'Unmounts target if something is mounted there.',
      sideEffects: true,
      callsLua: false,
      example: `mount.unmounted("/mnt/old")`,
    },
    info: {
      args: [{ name: 'target', type: 'string' }],
      result: '{mounted: boolean, source?, fstype?, options?}',
      description: 'What is mounted on target, if anything (the last mount there).',
      sideEffects: false,
      callsLua: false,
      example: `if not mount.info("/srv/data").mounted then error("data disk missing") end`,
    },
  },
});

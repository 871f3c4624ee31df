import { defineLuaModule } from '@runner/plugin-sdk';

const rule = {
  name: 'opts',
  type: '{proto?: "tcp"|"udp", from?: string, backend?: "nft"|"ufw", netns?: string}',
  optional: true,
};

/** Static declaration of the `firewall` module. */
export const firewallModule = defineLuaModule({
  name: 'firewall',
  description: 'Allow or deny ports with nftables or ufw',
  docs: `
The backend is ufw when ufw is installed and active, nftables (nft) otherwise, or opts.backend.
With nftables the rules live in a table of their own, "inet runner" (chain input, policy accept),
so other tables are never touched; each rule carries a comment naming it, which is how the module
finds it again. allow and deny add the rule unless it is there; remove deletes it. opts.netns runs
the backend in that network namespace (ip netns exec). proto defaults to tcp, from to anywhere.`,
  functions: {
    allow: {
      args: [{ name: 'port', type: 'integer' }, rule],
      result: '{changed, rule}',
      description: 'Accepts traffic to the port (from the address or network given).',
      sideEffects: true,
      callsLua: false,
      example: `firewall.allow(443)
firewall.allow(5432, { from = "10.0.0.0/8" })`,
    },
    deny: {
      args: [{ name: 'port', type: 'integer' }, rule],
      result: '{changed, rule}',
      description: 'Drops traffic to the port (from the address or network given).',
      sideEffects: true,
      callsLua: false,
      example: `firewall.deny(23)`,
    },
    remove: {
      args: [
        { name: 'port', type: 'integer' },
        { name: 'opts', type: '{action?: "allow"|"deny", proto?, from?, backend?, netns?}', optional: true },
      ],
      result: '{changed, rule}',
      description: 'Deletes the rule allow or deny made (action defaults to allow).',
      sideEffects: true,
      callsLua: false,
      example: `firewall.remove(8080)`,
    },
    rules: {
      args: [{ name: 'opts', type: '{backend?: string, netns?: string}', optional: true }],
      result: 'string[]',
      description: "The module's rules (nftables: the comments of table inet runner; ufw: ufw status lines).",
      sideEffects: false,
      callsLua: false,
      example: `for _, r in ipairs(firewall.rules()) do print(r) end`,
    },
  },
});

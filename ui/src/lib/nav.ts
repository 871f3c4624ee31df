/**
 * The pages of service.md ("Web UI pages") that exist in this build, in menu order, with the
 * permission each needs. Pages whose feature is not built yet (flows, hooks, events, scheduler,
 * terminal, stacks, secrets, SSH) are not listed: they come with their features.
 */
export interface NavItem {
  href: string;
  label: string;
  /** The permission the page's main API needs; the item is hidden without it. */
  permission: string;
  /** SVG path data of a 24x24 icon. */
  icon: string;
}

export const NAV: NavItem[] = [
  {
    href: '/',
    label: 'Dashboard',
    permission: 'metrics:view',
    icon: 'M3 13h8V3H3zm0 8h8v-6H3zm10 0h8V11h-8zm0-18v6h8V3z',
  },
  {
    href: '/agents',
    label: 'Agents',
    permission: 'agent:view',
    icon: 'M4 5h16v10H4zM8 19h8M12 15v4',
  },
  {
    href: '/agent-control',
    label: 'Agent control',
    permission: 'agent:exec',
    icon: 'M4 6h16M4 12h16M4 18h10M18 16l3 2-3 2',
  },
  {
    href: '/executions',
    label: 'Executions',
    permission: 'workflow:view',
    icon: 'M5 4l14 8-14 8z',
  },
  { href: '/logs', label: 'Logs', permission: 'logs:view', icon: 'M5 4h14v16H5zM8 8h8M8 12h8M8 16h5' },
  {
    href: '/settings',
    label: 'Settings',
    permission: 'account:self',
    icon: 'M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM3 12h2m14 0h2M12 3v2m0 14v2',
  },
];

/** The nav item a path belongs to (`/executions/abc` is Executions). */
export function activeItem(pathname: string): NavItem | undefined {
  return NAV.filter((item) => (item.href === '/' ? pathname === '/' : pathname.startsWith(item.href))).at(-1);
}

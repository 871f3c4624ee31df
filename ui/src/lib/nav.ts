/**
 * The registry the menu is built from: the pages of service.md ("Web UI pages") that exist in this
 * build, in menu order, with the permission each needs (a role without it is not offered the page).
 * A feature adds its page here.
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
  {
    href: '/flows',
    label: 'Flows',
    permission: 'workflow:view',
    icon: 'M4 5h6v4H4zM14 15h6v4h-6zM7 9v4a2 2 0 0 0 2 2h5',
  },
  {
    href: '/scheduler',
    label: 'Scheduler',
    permission: 'schedule:view',
    icon: 'M12 7v5l3 2M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z',
  },
  {
    href: '/hooks',
    label: 'Hooks',
    permission: 'hook:view',
    icon: 'M7 4v9a5 5 0 0 0 10 0v-2M17 11l-3 3M17 11l3 3',
  },
  {
    href: '/events',
    label: 'Events',
    permission: 'event:view',
    icon: 'M4 6h16M4 12h16M4 18h16M8 4v4M12 10v4M16 16v4',
  },
  {
    href: '/stacks',
    label: 'Stacks',
    permission: 'stack:view',
    icon: 'M12 3l9 5-9 5-9-5zM3 13l9 5 9-5M3 17l9 5 9-5',
  },
  {
    href: '/secrets',
    label: 'Secrets',
    permission: 'secret:view',
    icon: 'M7 11V8a5 5 0 0 1 10 0v3M5 11h14v10H5zM12 15v2',
  },
  {
    href: '/gitops',
    label: 'GitOps',
    permission: 'gitops:view',
    icon: 'M6 3v12M6 15a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM18 9a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM18 9a9 9 0 0 1-9 9',
  },
  {
    href: '/ssh',
    label: 'SSH profiles',
    permission: 'ssh:view',
    icon: 'M4 5h16v14H4zM7 9l3 3-3 3M12 15h5',
  },
  {
    href: '/terminal',
    label: 'Terminal',
    permission: 'terminal:open',
    icon: 'M3 4h18v16H3zM6 8l4 4-4 4M12 16h6',
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

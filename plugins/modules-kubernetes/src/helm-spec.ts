import { defineLuaModule } from '@runner/plugin-sdk';

const CLUSTER = 'namespace?: string, kubeconfig?: string, kube_context?: string';

export const helmModule = defineLuaModule({
  name: 'helm',
  description: 'Helm: install or upgrade a release idempotently, uninstall, status, list, repositories',
  docs: `
Drives the helm command line on the host (it must be installed), against the cluster kubectl would
use, or opts.kubeconfig and opts.kube_context. Values are passed in a temporary file readable by the
runner only, and a repository password on helm's standard input: neither reaches a command line or
a log.`,
  functions: {
    install: {
      args: [
        { name: 'release', type: 'string' },
        { name: 'chart', type: 'string' },
        {
          name: 'opts',
          type: `{${CLUSTER}, values?: table, version?: string, repo?: string, create_namespace?: boolean, wait?: boolean, atomic?: boolean, timeout?: string}`,
          optional: true,
        },
      ],
      result: '{changed, action?, revision, status}',
      callsLua: false,
      sideEffects: true,
      description: `\`helm upgrade --install\`, idempotent: helm first renders the upgrade with --dry-run, and when
the deployed release already has that chart version, those values and that manifest nothing is run
(changed = false, no new revision). action is install or upgrade. In dry-run only the comparison
runs.`,
      example: `helm.repo_add("bitnami", "https://charts.bitnami.com/bitnami")
local r = helm.install("web", "bitnami/nginx", { namespace = "web", create_namespace = true,
  version = "18.1.0", values = { replicaCount = 2 }, wait = true })`,
    },
    uninstall: {
      args: [
        { name: 'release', type: 'string' },
        { name: 'opts', type: `{${CLUSTER}, wait?: boolean}`, optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Uninstalls a release; changed = false when there was none.',
    },
    status: {
      args: [
        { name: 'release', type: 'string' },
        { name: 'opts', type: `{${CLUSTER}}`, optional: true },
      ],
      result: '{name, revision, status, chart, values}|nil',
      callsLua: false,
      sideEffects: false,
      description:
        'The release (its revision, status, chart name and version, and user values), or nil when there is none.',
    },
    list: {
      args: [{ name: 'opts', type: `{${CLUSTER}, all_namespaces?: boolean}`, optional: true }],
      result: '{name, namespace, revision, status, chart, app_version}[]',
      callsLua: false,
      sideEffects: false,
      description: 'The releases of the namespace (of all namespaces with opts.all_namespaces).',
    },
    repo_add: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'url', type: 'string' },
        { name: 'opts', type: '{username?: string, password?: string}', optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Adds a chart repository; changed = false when it is there with that URL.',
    },
  },
});

import { defineLuaModule } from '@runner/plugin-sdk';

const CLUSTER = 'kubeconfig?: string, kube_context?: string, namespace?: string';

export const k8sModule = defineLuaModule({
  name: 'k8s',
  description: 'Kubernetes: apply manifests (from templates), get, delete, rollout status, pod logs',
  docs: `
Talks to the cluster's API with the official client (@kubernetes/client-node), loaded on the first
call. The cluster is found as kubectl finds it: opts.kubeconfig, else $KUBECONFIG, ~/.kube/config
or the pod's service account; opts.kube_context picks a context; the namespace is opts.namespace, else
the context's, else "default". Credentials stay in the kubeconfig and are never logged.
Kinds are named as kubectl names them: "deploy", "deployments" and "Deployment" are the same; a
custom resource needs opts.api_version ("cert-manager.io/v1") with its kind.`,
  functions: {
    apply: {
      args: [
        { name: 'manifest', type: 'string|table|table[]' },
        {
          name: 'opts',
          type: `{${CLUSTER}, context?: table, syntax?: string, field_manager?: string, force?: boolean}`,
          optional: true,
        },
      ],
      result: '{changed, objects = {name, namespace, changed, action}[], dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: `Applies each object of the manifest with server-side apply (field manager opts.field_manager,
"runner" by default; opts.force takes over fields another manager owns). manifest is YAML text
(several documents allowed), a table or a list of tables. With opts.context the text is first
rendered as a template with that table as its context (opts.syntax: "jinja", the default, or "go"). action is created, configured or
unchanged; changed is true when the server stored a new version of any object. In dry-run the
server is asked with dryRun=All: it validates and answers what would change, and stores nothing.`,
      example: `k8s.apply(file.read("/srv/deploy/web.yaml"), { namespace = "prod",
  context = { image = vars.image, replicas = 3 } })
k8s.rollout_status("deploy", "web", { namespace = "prod", timeout = "5m" })`,
    },
    get: {
      args: [
        { name: 'kind', type: 'string' },
        { name: 'name', type: 'string', optional: true },
        {
          name: 'opts',
          type: `{${CLUSTER}, api_version?: string, selector?: string, all_namespaces?: boolean}`,
          optional: true,
        },
      ],
      result: 'table|table[]|nil',
      callsLua: false,
      sideEffects: false,
      description:
        'One object (nil when there is none), or without a name the list of objects of that kind, filtered by the label selector opts.selector ("app=web,tier=front").',
      example: `local pods = k8s.get("pods", nil, { namespace = "prod", selector = "app=web" })`,
    },
    delete: {
      args: [
        { name: 'kind', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CLUSTER}, api_version?: string}`, optional: true },
      ],
      result: '{changed, dry_run?}',
      callsLua: false,
      sideEffects: true,
      description: 'Deletes an object; changed = false when there was none.',
    },
    rollout_status: {
      args: [
        { name: 'kind', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'opts', type: `{${CLUSTER}, timeout?: duration}`, optional: true },
      ],
      result: '{done, message}',
      callsLua: false,
      sideEffects: false,
      description: `Waits, as kubectl rollout status does, until a Deployment, StatefulSet or DaemonSet has rolled out
its latest generation; raises when opts.timeout (5m by default) passes first, with where it stood.`,
    },
    logs: {
      args: [
        { name: 'pod', type: 'string' },
        {
          name: 'opts',
          type: `{${CLUSTER}, container?: string, tail?: number, since_seconds?: number, previous?: boolean}`,
          optional: true,
        },
      ],
      result: 'string',
      callsLua: false,
      sideEffects: false,
      description: "A pod's log (of opts.container when it has several; opts.previous: of the last terminated one).",
    },
  },
});

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { ROOT } from './support/paths';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

/** Each kind the manifests may contain → its schema-checked model (kubernetes-models, from the Kubernetes OpenAPI). */
const MODELS: Record<string, new (o: never) => { validate: () => void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** `kubectl kustomize <dir>`, as CI and a platform team render it. */
function render(dir: string): K8sObject[] {
  const out = execFileSync('kubectl', ['kustomize', join(ROOT, 'deploy', 'k8s', dir)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as K8sObject);
}

type Container = {
  name: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
  securityContext?: Record<string, unknown>;
};
type PodSpec = { terminationGracePeriodSeconds?: number; containers: Container[] };
const pod = (o: K8sObject) => (o.spec as { template: { spec: PodSpec } }).template.spec;
const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe.each(['base', 'overlays/dev', 'overlays/prod'])('kubectl kustomize deploy/k8s/%s', (dir) => {
  const objects = render(dir);

  it('renders only objects that validate against the Kubernetes schemas', () => {
    const problems = objects.flatMap((o) => {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      if (!Model) return [`${o.apiVersion} ${o.kind} ${o.metadata.name}: no schema model listed in this test`];
      try {
        new Model(o as never).validate();
        return [];
      } catch (err) {
        return [`${o.kind} ${o.metadata.name}: ${(err as Error).message}`];
      }
    });
    expect(problems).toEqual([]);
  });

  it('runs executors as StatefulSets probed on /health/ready and /health, with time to reap kernels', () => {
    for (const name of ['stoa-executor-demo', 'stoa-executor-science']) {
      const set = named(objects, 'StatefulSet', name);
      expect(set, name).toBeDefined();
      const spec = pod(set!);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
      const [executor] = spec.containers;
      expect(executor?.readinessProbe?.httpGet?.path).toBe('/health/ready');
      expect(executor?.livenessProbe?.httpGet?.path).toBe('/health');
      expect(executor?.securityContext).toMatchObject({
        procMount: 'Unmasked',
        seccompProfile: { type: 'Unconfined' },
      });
      expect(named(objects, 'Service', name)?.spec).toMatchObject({ clusterIP: 'None' });
    }
  });

  it('runs the router as a Deployment with an HPA and a PodDisruptionBudget selecting it', () => {
    const router = named(objects, 'Deployment', 'stoa-router');
    expect(pod(router!).containers[0]?.readinessProbe?.httpGet?.path).toBe('/health/ready');
    expect(named(objects, 'HorizontalPodAutoscaler', 'stoa-router')?.spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name: 'stoa-router' },
    });
    expect(named(objects, 'PodDisruptionBudget', 'stoa-router')?.spec).toMatchObject({
      selector: { matchLabels: { 'app.kubernetes.io/name': 'stoa-router' } },
    });
  });

  it('mounts server.yaml files that the executor schema accepts', () => {
    const demo = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('stoa-executor-demo-config'));
    const config = parseYaml(demo!.data!['server.yaml']!) as Record<string, unknown>;
    expect(config).toMatchObject({ name: 'demo', data_dir: '/data', server: { host: '0.0.0.0', port: 8000 } });
  });
});

describe('overlays', () => {
  const env = (objects: K8sObject[]) =>
    objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('stoa-env'))!.data!;

  it('dev runs no-op auth in its own namespace', () => {
    const dev = render('overlays/dev');
    expect(env(dev)).toMatchObject({ STOA_AUTH_MODE: 'noop', STOA_ALLOW_UNAUTHENTICATED_REMOTE: '1' });
    expect(new Set(dev.map((o) => o.metadata.namespace ?? o.metadata.name))).toEqual(new Set(['stoa-dev']));
  });

  it('prod runs Entra auth with PostgreSQL, Redis and the session key from secrets, and ships no secret values', () => {
    const prod = render('overlays/prod');
    expect(env(prod)).toMatchObject({ STOA_AUTH_MODE: 'entra' });
    expect(env(prod)).not.toHaveProperty('STOA_ALLOW_UNAUTHENTICATED_REMOTE');
    expect(prod.some((o) => o.kind === 'Secret')).toBe(false);
    const executor = pod(named(prod, 'StatefulSet', 'stoa-executor-demo')!).containers[0]!;
    const fromSecret = Object.fromEntries(
      (executor.env ?? []).map((e) => [e.name, `${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}`]),
    );
    expect(fromSecret).toEqual({
      ENTRA_TENANT_ID: 'stoa-entra/tenant_id',
      ENTRA_CLIENT_ID: 'stoa-entra/client_id',
      DATABASE_URL: 'stoa-datastores/database_url',
      REDIS_URL: 'stoa-datastores/redis_url',
      STOA_SESSION_KEY: 'stoa-session-key/key',
    });
  });
});

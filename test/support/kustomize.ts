import { spawnSync } from 'node:child_process';
import { parseYamlDocuments } from './deploy.js';

/**
 * kustomize v5 as the manifests' tests find it: a kustomize binary, else kubectl's built-in one
 * (`bash .ci/run` installs kubectl when neither is on PATH).
 */
export function kustomizeCommand(): readonly [string, ...string[]] {
  if (spawnSync('kustomize', ['version'], { stdio: 'ignore' }).status === 0) return ['kustomize', 'build'];
  if (spawnSync('kubectl', ['kustomize', '--help'], { stdio: 'ignore' }).status === 0) return ['kubectl', 'kustomize'];
  throw new Error(
    'neither kustomize nor kubectl is on PATH: install kubectl (it carries kustomize) or kustomize v5; `bash .ci/run` installs kubectl when neither is there',
  );
}

/** `kustomize build DIR`: its status, output and error, as they are. */
export function kustomizeBuild(dir: string): { status: number | null; stdout: string; stderr: string } {
  const [command, ...args] = kustomizeCommand();
  const result = spawnSync(command, [...args, dir], { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The rendered objects of DIR; throws with kustomize's message when it fails. */
export function kustomizeObjects(dir: string): unknown[] {
  const result = kustomizeBuild(dir);
  if (result.status !== 0) throw new Error(`kustomize build ${dir} failed:\n${result.stderr}`);
  return parseYamlDocuments(result.stdout, `kustomize build ${dir}`).map((d) => d.value);
}

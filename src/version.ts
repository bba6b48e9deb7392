import { readFileSync } from 'node:fs';

/** Argus' version, from its package.json (`argus --version`, the KServe server metadata). */
export function argusVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

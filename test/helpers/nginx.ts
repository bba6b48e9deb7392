import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { tempDir, waitFor } from './env.js';

/** Debian's nginx (.ci/run installs it), as a reverse proxy in front of Argus in tests. */
export const NGINX = '/usr/sbin/nginx';

/** false when nginx is there, else the message a test skipped for want of it shows. */
export const nginxSkip = (what: string): string | false =>
  existsSync(NGINX) ? false : `Debian nginx not installed (.ci/run installs it): ${what} skipped`;

/** One `server` of the proxy: the port it listens on, and the lines of its `location /`. */
export interface ProxySite {
  port: number;
  location: string[];
}

/**
 * Runs nginx in the foreground with one server per site, each proxying to `upstream`, until the
 * test ends. Its files (temporary paths, pid, error log) stay in a directory of the test's own.
 */
export async function startNginx(
  t: { after: (fn: () => Promise<void>) => void },
  sites: ProxySite[],
): Promise<void> {
  const dir = await tempDir(t);
  for (const d of ['body', 'proxy', 'fcgi', 'uwsgi', 'scgi']) await mkdir(join(dir, d));
  const conf = [
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log;`,
    'events { worker_connections 64; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;`,
    `  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
    ...sites.map((s) => `  server { listen 127.0.0.1:${s.port}; location / { ${s.location.join(' ')} } }`),
    '}',
  ].join('\n');
  await writeFile(join(dir, 'nginx.conf'), conf);
  const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  t.after(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  await waitFor(
    `nginx listening (${err})`,
    () => existsSync(join(dir, 'nginx.pid')) || child.exitCode !== null,
    10_000,
  );
  if (child.exitCode !== null) throw new Error(`nginx exited: ${err}`);
}

/** An HTTP answer: status, headers and body as text. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly the headers given (Host included: fetch would not send it). */
export function send(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findOrInstall } from './debian-package.js';

/** nginx, found or installed from Debian's nginx-light; undefined skips the nginx row. */
export async function findOrInstallNginx(log: (line: string) => void): Promise<string | undefined> {
  const nginx = await findOrInstall('nginx', 'nginx-light', log);
  if (!nginx) log('skipping the nginx row');
  return nginx;
}

/**
 * An nginx config doing the same header work as hub on the hot path: `workers` worker processes,
 * keep-alive to the upstream, hop-by-hop handling, and five headers set on the forwarded request.
 */
export function writeNginxConfig(dir: string, listenPort: number, upstreamPort: number, workers = 1): string {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes ${workers};
error_log ${join(dir, 'logs', 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream seller { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${listenPort};
    location / {
      proxy_pass http://seller;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $proxy_host;
      proxy_set_header x-forwarded-for $proxy_add_x_forwarded_for;
      proxy_set_header hub-request-id $request_id;
      proxy_set_header hub-agent-id "agt_benchmark";
      proxy_set_header hub-anonymous-id "agt_benchmark";
      proxy_set_header hub-signature "t=0,kid=hsec_benchmark,v1=$request_id";
    }
  }
}
`,
  );
  return conf;
}

export function nginxVersion(bin: string): string {
  try {
    return execFileSync(bin, ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim() || 'nginx';
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? 'nginx').trim();
  }
}

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Whatever one request throws (its handler, a listener of its response, its socket or a stream
// it guards, a stream error nobody hears) is that request's failure: logged with its id,
// answered 500 if nothing was sent, its connection closed, and the process serves on. A promise
// nobody handles is logged and the process goes on. An exception outside every guard (a timer's)
// still ends the process, for its supervisor to start it again.

const fixture = fileURLToPath(new URL('../helpers/faulty-server.ts', import.meta.url));

type LogLine = { level: number; msg: string; reqId?: string; path?: string; err?: { message: string } };

async function startFaultyServer(t: Tap) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const waiting = new Set<() => void>();
  child.stdout!.on('data', (d) => {
    out += d;
    for (const check of waiting) check();
  });
  // 'close', not 'exit': the last lines it printed have been read by then.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
      const listening = /listening (\d+)/.exec(err);
      if (listening) resolve(Number(listening[1]));
    });
    child.once('exit', () => reject(new Error(`the fixture exited: ${err}`)));
  });
  const logs = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
  // A line is logged when the server hears of the failure, which can be after the client has
  // seen its connection end: wait for what is expected to arrive rather than read it once.
  const logged = (expected: (lines: LogLine[]) => boolean, timeoutMs = 10_000) =>
    new Promise<LogLine[]>((resolve, reject) => {
      const check = () => {
        const lines = logs();
        if (!expected(lines)) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(lines);
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`not logged within ${timeoutMs} ms:\n${out}`));
      }, timeoutMs);
      waiting.add(check);
      check();
    });
  return { child, port, logs, logged, exited };
}
type Tap = { teardown: (fn: () => unknown) => void };

t.test('a request that throws in any way fails alone; the process serves on', async (t) => {
  const server = await startFaultyServer(t);
  const base = `http://127.0.0.1:${server.port}`;
  const ok = async () => (await (await fetch(`${base}/ok`)).json()) as { ok: boolean; pid: number };
  const pid = (await ok()).pid;

  const answered500 = ['/throw', '/reject', '/unheard-error'];
  for (const path of answered500) {
    const res = await fetch(`${base}${path}`);
    t.equal(res.status, 500, `${path}: 500`);
    t.same(await res.json(), { error: 'Internal server error' }, `${path}: the envelope, nothing internal`);
    t.equal(res.headers.get('connection'), 'close', `${path}: its connection is closed`);
    t.equal((await ok()).pid, pid, `${path}: the same process answers next`);
  }
  for (const path of ['/close-listener', '/orphan-promise']) {
    const answered = await fetch(`${base}${path}`);
    t.same([answered.status, await answered.json()], [200, { answered: true }], `${path}: an answered request keeps its answer`);
  }
  await t.rejects(fetch(`${base}/socket-listener`), 'a connection whose listener throws is closed');
  t.equal((await ok()).pid, pid, 'the same process answers after every failure');

  const socketListenerLogged = (lines: LogLine[]) =>
    lines.some((l) => l.msg === 'connection failed; it is closed' && /socket listener/.test(l.err?.message ?? ''));
  const promiseLogged = (lines: LogLine[]) =>
    lines.some((l) => /nobody handled it/.test(l.msg) && /nobody awaited/.test(l.err?.message ?? ''));
  const perRequest = [...answered500, '/close-listener'];
  const everyFailure = (lines: LogLine[]) =>
    socketListenerLogged(lines) && promiseLogged(lines) && perRequest.every((path) => lines.some((l) => l.path === path));
  const failed = (await server.logged(everyFailure).catch(() => server.logs())).filter((line) => line.level === 50);
  for (const path of perRequest) {
    const line = failed.find((l) => l.path === path);
    t.ok(line, `${path}: one error line`);
    t.match(line?.reqId, /^r[0-9a-z]+$/, `${path}: with the request's id`);
    t.ok(line?.err?.message, `${path}: and the error`);
  }
  t.ok(socketListenerLogged(failed), 'the socket listener’s error is logged');
  t.ok(promiseLogged(failed), 'the promise nobody handled is logged');

  await fetch(`${base}/timer`).catch(() => undefined);
  t.equal(await server.exited, 1, 'an exception outside every guard still ends the process');
  t.ok(
    server.logs().some((l) => l.level === 60 && /outside any request/.test(l.msg) && /timer/.test(l.err?.message ?? '')),
    'with one fatal line saying so',
  );
});

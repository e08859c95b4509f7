import nock from 'nock';

type Tap = { teardown: (fn: () => unknown) => void };

// Importing nock turns its interception on for the whole process. While on, a request it lets
// through to a real server loses its body on Node 20 (the fetch interceptor clones a request whose
// body it has read: "TypeError: unusable"), so it is off except while a test injects faults, and
// everything meant for the real hub is sent with it off.
nock.restore();

/**
 * Turns nock on for the faults `scope` is given (`scope.post(path).reply(503)`): requests to
 * `baseUrl` that match them get the fault instead of the real server's answer. `end()` (at the
 * latest, the test's teardown) takes the faults away and turns nock off again.
 */
export function injectFaults(t: Tap, baseUrl: string): { scope: nock.Scope; end: () => void } {
  if (!nock.isActive()) nock.activate();
  const end = () => {
    nock.cleanAll();
    nock.restore();
  };
  t.teardown(end);
  return { scope: nock(baseUrl), end };
}

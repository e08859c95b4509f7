/** A stand-in for a test's `t.teardown`, so benchmarks can use the test harness's servers. */
export function teardownRegistry() {
  const steps: (() => unknown)[] = [];
  return {
    teardown: (fn: () => unknown) => void steps.push(fn),
    async run(): Promise<void> {
      for (const step of steps.reverse()) await Promise.resolve(step()).catch(() => {});
    },
  };
}

/**
 * How many random cases a property or seeded-corpus test runs: the full count in `pnpm test`; a
 * tenth under `pnpm mutate envelope` (vitest.stryker.config.ts sets KLBR_MUTATION), where each covering
 * mutant reruns these suites on a shared 2-core box. The example tests and shared vectors pin the
 * same edges deterministically at full strength.
 */
export function runs(n: number): number {
  return process.env.KLBR_MUTATION ? Math.ceil(n / 10) : n;
}

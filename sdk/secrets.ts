/**
 * The signing secrets a seller holds, by kid (`hsec_…`). During a rotation both the old and the
 * new secret are listed; the signature's kid picks one. A function lets a seller read them from
 * its own secret store at verification time.
 */
export type SigningSecrets = Readonly<Record<string, string>> | ReadonlyMap<string, string> | ((kid: string) => string | undefined);

export function secretLookup(secrets: SigningSecrets): (kid: string) => string | undefined {
  if (typeof secrets === 'function') return secrets;
  if (secrets instanceof Map) return (kid) => secrets.get(kid);
  const table = secrets as Readonly<Record<string, string>>;
  // Own properties only: a kid such as "constructor" or "__proto__" must not find anything.
  return (kid) => (Object.hasOwn(table, kid) ? table[kid] : undefined);
}

/** The annotations of ours (quota-ledger.io/...) are the system's: a REST write never stores them (nor claims a cluster object). */
export function withoutSystemAnnotations(annotations: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([key]) => !key.startsWith('quota-ledger.io/')));
}

/**
 * A warning as kube-apiserver sends one (RFC 7234 §5.5 shape, code 299, agent "-"): the text
 * quoted, with `"` and `\` escaped, and nothing outside printable ASCII (a header cannot carry it).
 */
export function warningHeader(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, (c) => `\\${c}`);
  return `299 - "${printable}"`;
}

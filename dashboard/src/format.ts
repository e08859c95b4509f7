/**
 * How figures read on the page. Amounts come as the API's six-decimal strings and are shown from
 * the string itself, never through a float: "1.250000" reads "$1.25", and a sub-cent amount keeps
 * its digits ("0.000500" reads "$0.0005") instead of rounding to nothing.
 */
export function usd(value: string): string {
  const negative = value.startsWith('-');
  const [whole, fraction = ''] = (negative ? value.slice(1) : value).split('.');
  return `${negative ? '-' : ''}$${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}
export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

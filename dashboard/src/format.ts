/** How figures read on the page. */
export const usd = (value: string | number) => `$${Number(value).toFixed(2)}`;
export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

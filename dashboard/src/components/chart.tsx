import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export type Series = { label: string; values: number[]; color: string };

/**
 * A daily time series drawn with uPlot, sized to its box (narrow screens included). The figure
 * is also given as text, for readers who cannot see it.
 */
export function DailyChart({
  title,
  days,
  series,
  format,
}: {
  title: string;
  days: string[];
  series: Series[];
  format?: (n: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const x = days.map((day) => Date.parse(`${day}T12:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width: element.clientWidth || 320,
        height: 180,
        legend: { show: series.length > 1 },
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => (format ? format(t) : String(t))), size: 60 }],
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22` }))],
      },
      [x, ...series.map((s) => s.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series, format]);
  const total = series.map((s) => `${s.label}: ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title} per day over ${days.length} days. Totals ${total}.`} />
    </figure>
  );
}

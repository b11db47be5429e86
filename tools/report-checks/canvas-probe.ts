// What each chart canvas of a report page holds, measured in the page: painted pixels, pixels of each data colour
// inside the chart's plot area (so a drawn legend or axis alone does not count), and whether its image differs
// from a blank canvas of the same size. Browser code, passed to page.evaluate as text (the repo compiles without DOM types).

export interface CanvasProbe {
  id: string;
  width: number;
  height: number;
  /** a chart.js instance is attached to the canvas */
  hasChart: boolean;
  /** pixels with alpha > 0 anywhere on the canvas */
  painted: number;
  /** the chart's plot area, null without a chart */
  area: { left: number; top: number; right: number; bottom: number } | null;
  dataColors: string[];
  /** per data colour: pixels within 16 per channel of it inside the plot area */
  colorHits: number[];
  /** canvas.toDataURL() differs from that of an empty canvas of the same size */
  differsFromBlank: boolean;
}

export const CANVAS_PROBE = `(() => {
  const data = JSON.parse(document.getElementById('rx-report-data').textContent);
  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return data.charts.map((c) => {
    const canvas = document.getElementById(c.id);
    const chart = typeof Chart !== 'undefined' ? Chart.getChart(canvas) : undefined;
    const ctx = canvas.getContext('2d');
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const scale = canvas.width / (canvas.clientWidth || canvas.width);
    const a = chart ? chart.chartArea : null;
    const box = a ? { left: Math.floor(a.left * scale), top: Math.floor(a.top * scale), right: Math.ceil(a.right * scale), bottom: Math.ceil(a.bottom * scale) } : null;
    const targets = c.dataColors.map(rgb);
    const colorHits = targets.map(() => 0);
    let painted = 0;
    for (let y = 0; y < canvas.height; y++) {
      for (let x = 0; x < canvas.width; x++) {
        const i = (y * canvas.width + x) * 4;
        if (px[i + 3] === 0) continue;
        painted++;
        if (!box || x < box.left || x > box.right || y < box.top || y > box.bottom) continue;
        targets.forEach((t, k) => {
          if (Math.abs(px[i] - t[0]) <= 16 && Math.abs(px[i + 1] - t[1]) <= 16 && Math.abs(px[i + 2] - t[2]) <= 16) colorHits[k]++;
        });
      }
    }
    const blank = document.createElement('canvas');
    blank.width = canvas.width;
    blank.height = canvas.height;
    return {
      id: c.id, width: canvas.width, height: canvas.height, hasChart: Boolean(chart), painted,
      area: box, dataColors: c.dataColors, colorHits, differsFromBlank: canvas.toDataURL() !== blank.toDataURL(),
    };
  });
})()`;

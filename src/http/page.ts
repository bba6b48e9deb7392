/** The live page: every camera's latest annotated frame, its state, fps and last detections. */
export const LIVE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Argus</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px system-ui, sans-serif; margin: 1rem; background: #111; color: #eee; }
  main { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1rem; }
  figure { margin: 0; background: #222; padding: .5rem; border-radius: 6px; }
  img { width: 100%; background: #333; min-height: 120px; }
  .state { font-weight: bold; }
  .streaming { color: #7c7; } .backoff, .offline { color: #e77; } .connecting { color: #ec5; }
  ul { margin: .3rem 0 0; padding-left: 1.2rem; }
</style>
</head>
<body>
<h1>Argus</h1>
<main id="cameras"></main>
<script>
const main = document.getElementById('cameras');
const cards = new Map();
function card(name) {
  let c = cards.get(name);
  if (c) return c;
  const fig = document.createElement('figure');
  fig.dataset.camera = name;
  const img = document.createElement('img');
  img.alt = name;
  const cap = document.createElement('figcaption');
  const list = document.createElement('ul');
  fig.append(img, cap, list);
  main.append(fig);
  c = { img, cap, list };
  cards.set(name, c);
  return c;
}
async function refresh() {
  try {
    const cams = await (await fetch('/api/cameras')).json();
    for (const cam of cams) {
      const c = card(cam.camera);
      c.cap.innerHTML = '';
      const b = document.createElement('b');
      b.textContent = cam.camera + ' ';
      const s = document.createElement('span');
      s.className = 'state ' + cam.state;
      s.textContent = cam.state;
      c.cap.append(b, s, document.createTextNode(' · ' + cam.fps_in.toFixed(1) + ' fps in, ' + cam.fps_analysed.toFixed(1) + ' analysed'));
      c.list.innerHTML = '';
      for (const d of cam.detections) {
        const li = document.createElement('li');
        li.textContent = d.label + ' ' + d.score.toFixed(2);
        c.list.append(li);
      }
      if (cam.has_frame) c.img.src = '/api/cameras/' + encodeURIComponent(cam.camera) + '/latest.jpg?t=' + Date.now();
    }
  } catch (e) { /* the next refresh retries */ }
}
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
`;

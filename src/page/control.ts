import type { ControlView, SettingValue } from './api.js';
import { cards, type Card } from './cards.js';
import { $, el } from './dom.js';
import { camPath, keyName, lineOfKey } from './format.js';

/** Inputs whose change is on its way: their value is left as the person set it. */
const pending = new Set<HTMLElement>();
let lastControl: ControlView = { enabled: false, mode: '', modes: [], cameras: {} };

/**
 * A change of a runtime setting (PUT /api/control/...): the answer is the settings as they are
 * now. A 403 that a token would mend asks for it once (kept for the tab, in sessionStorage) and
 * tries again; a refused token is forgotten, so the next change asks again.
 */
async function change(path: string, value: SettingValue | string): Promise<ControlView> {
  const send = (): Promise<Response> => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    const token = sessionStorage.getItem('argus-token');
    if (token) headers.Authorization = 'Bearer ' + token;
    return fetch('/api/control' + path, { method: 'PUT', headers, body: JSON.stringify(value) });
  };
  let res = await send();
  if (res.status === 403 && res.headers.has('WWW-Authenticate')) {
    const token = prompt('Changing settings from here takes the token (http.token):');
    if (token) {
      sessionStorage.setItem('argus-token', token.trim());
      res = await send();
      if (res.status === 403) sessionStorage.removeItem('argus-token');
    }
  }
  const body = (await res.json().catch(() => ({}))) as Partial<ControlView> & { error?: string };
  if (!res.ok) throw new Error(body.error || path + ' answered ' + res.status);
  return body as ControlView;
}

/** Runs a change from an input: the input waits for its answer; a refusal is said and undone. */
async function changeFrom(
  input: HTMLInputElement | HTMLButtonElement | HTMLSelectElement,
  path: string,
  value: SettingValue | string,
): Promise<void> {
  input.disabled = true;
  pending.add(input);
  try {
    showControl(await change(path, value));
    $('control-msg').textContent = '';
  } catch (e) {
    $('control-msg').textContent = e instanceof Error ? e.message : String(e);
  } finally {
    pending.delete(input);
    input.disabled = !lastControl.enabled;
    showControl(lastControl);
  }
}

/** A camera's settings as inputs: built when its keys change, else only their values set. */
function controlsOf(name: string, c: Card, settings: Record<string, SettingValue>): void {
  const keys = JSON.stringify(Object.keys(settings));
  if (c.keys !== keys) {
    c.keys = keys;
    c.inputs = new Map();
    c.controls.replaceChildren();
    for (const [key, v] of Object.entries(settings)) {
      const label = el('label', '', keyName(key) + ' ');
      const input = el('input');
      input.dataset.key = key;
      input.type = typeof v === 'boolean' ? 'checkbox' : 'number';
      const path = camPath(name, encodeURIComponent(key));
      if (input.type === 'checkbox')
        input.addEventListener('change', () => void changeFrom(input, path, input.checked));
      else input.addEventListener('change', () => void changeFrom(input, path, Number(input.value)));
      label.append(input);
      c.controls.append(label);
      c.inputs.set(key, input);
      const line = lineOfKey(key);
      if (line !== undefined) {
        const reset = el('button', '', 'reset');
        reset.title = 'set the counts of line ' + line + ' back to 0';
        reset.addEventListener(
          'click',
          () => void changeFrom(reset, camPath(name, 'lines/' + encodeURIComponent(line) + '/reset'), true),
        );
        label.append(' ', reset);
      }
    }
  }
  for (const [key, v] of Object.entries(settings)) {
    const input = c.inputs.get(key)!;
    // Not under the person's hands: a change on its way, a number being typed.
    if (pending.has(input) || document.activeElement === input) continue;
    input.disabled = !lastControl.enabled;
    if (input.type === 'checkbox') input.checked = v as boolean;
    else input.value = String(v);
  }
}

/** The settings as they are now: the mode in the header, each camera's inputs on its card. */
export function showControl(view: ControlView): void {
  lastControl = view;
  const mode = $<HTMLSelectElement>('mode');
  if (JSON.stringify([...mode.options].map((o) => o.value)) !== JSON.stringify(view.modes))
    mode.replaceChildren(
      ...view.modes.map((m) => {
        const o = el('option', '', m);
        o.value = m;
        return o;
      }),
    );
  if (!pending.has(mode)) mode.value = view.mode;
  mode.disabled = !view.enabled || pending.has(mode);
  for (const [name, settings] of Object.entries(view.cameras)) {
    const c = cards.get(name);
    if (c) controlsOf(name, c, settings);
  }
}

/** The header's mode select changes the mode. */
export function listenToMode(): void {
  const mode = $<HTMLSelectElement>('mode');
  mode.addEventListener('change', () => void changeFrom(mode, '/mode', mode.value));
}

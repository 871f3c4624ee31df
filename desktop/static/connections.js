/* global document, window, FormData */
// The connections page: lists the saved masters through window.runnerConnections (the preload's
// bridge) and adds, removes and opens them. The main process checks every call.
const list = document.getElementById('connections');
const form = document.getElementById('add');
const error = document.getElementById('error');
const bridge = window.runnerConnections;

function button(text, label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', () => onClick().catch(show));
  return b;
}

function show(e) {
  // IPC errors arrive as "Error invoking remote method '...': Error: <message>".
  error.textContent = String(e && e.message ? e.message : e).replace(
    /^Error invoking remote method '[^']+': (\w*Error: )?/,
    '',
  );
}

async function render() {
  const { current, connections } = await bridge.list();
  list.replaceChildren(
    ...connections.map((c) => {
      const item = document.createElement('li');
      const text = document.createElement('span');
      text.textContent = `${c.name} (${c.url})${c.id === current ? ' · shown' : ''}`;
      item.append(
        text,
        button('Open', `Open ${c.name}`, () => bridge.open(c.id)),
      );
      if (c.id !== 'embedded') {
        item.append(
          button('Remove', `Remove ${c.name}`, async () => {
            await bridge.remove(c.id);
            await render();
          }),
        );
      }
      return item;
    }),
  );
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  error.textContent = '';
  const data = new FormData(form);
  bridge
    .add({
      name: String(data.get('name')),
      url: String(data.get('url')),
      token: String(data.get('token') || '') || undefined,
    })
    .then(() => {
      form.reset();
      return render();
    })
    .catch(show);
});

render().catch(show);

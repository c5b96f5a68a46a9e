() => {
  // Leave the brush tab for the photo as soon as something changes the state (send, undo,
  // redo, a state or a session clicked): the photo view then shows the new state at once,
  // and the brush canvas (slow to redraw) is not touched. Runs after Gradio has read the
  // inputs of the event (the brushed strokes are already on their way).
  const toPhoto = () => {
    const tabs = Array.from(document.querySelectorAll('#photo-tabs [role=tab]'));
    const brush = tabs.find((t) => t.id && t.id.startsWith('brush'))
      || tabs.find((t) => t.innerText.trim().startsWith('Brush'));
    if (brush && brush.getAttribute('aria-selected') === 'true') {
      const photo = tabs.find((t) => t !== brush && t.innerText.trim() === 'Photo');
      if (photo) { setTimeout(() => photo.click(), 0); }
    }
  };
  const triggers = '#undo-btn, #redo-btn, #instruction button, #graph [data-node], ' +
    '#sessions [data-key], #examples';
  document.addEventListener('click', (e) => {
    if (e.target.closest(triggers)) { toPhoto(); }
  }, true);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && e.target.closest('#instruction')) { toPhoto(); }
  }, true);
  // Shift-click on the photo adds to the selection (read by the photo's select event).
  document.addEventListener('pointerdown', (e) => {
    if (e.target.closest('#photo')) { window.loupeShift = e.shiftKey; }
  }, true);
}

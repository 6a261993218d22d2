// The data explorer, progressively enhanced (it works without this file): a cut cell shows its
// full text on click or Enter.
document.addEventListener('DOMContentLoaded', () => {
  const explorer = document.getElementById('explorer');
  if (!explorer) return;
  for (const cell of explorer.querySelectorAll('td.cell-cut[title]')) {
    cell.tabIndex = 0;
    const open = () => {
      const full = cell.getAttribute('title');
      if (full === null) return;
      cell.textContent = full;
      cell.removeAttribute('title');
      cell.classList.remove('cell-cut');
      cell.classList.add('cell-open');
    };
    cell.addEventListener('click', open);
    cell.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') open();
    });
  }
});

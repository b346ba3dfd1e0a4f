// idvault console: copy buttons. Everything else works without JavaScript; the buttons stay
// hidden when it is off.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const status = document.createElement("p");
  status.className = "vh";
  status.setAttribute("role", "status");
  document.body.appendChild(status);
  for (const button of document.querySelectorAll("button.copy")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const label = button.firstChild.textContent;
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.firstChild.textContent = "Copied";
        status.textContent = "Copied to the clipboard";
      } catch {
        button.firstChild.textContent = "Select and copy by hand";
        status.textContent = "The browser refused the clipboard; select the text and copy it";
      }
      setTimeout(() => { button.firstChild.textContent = label; }, 2000);
    });
  }
});

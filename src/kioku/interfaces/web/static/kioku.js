// Progressive enhancement only: every page works without this file.
// A form marked data-busy says so on its button while the server works.
document.addEventListener("submit", function (event) {
  var form = event.target;
  var words = form.getAttribute("data-busy");
  var button = form.querySelector("button[type=submit]");
  if (words && button) { button.textContent = words; form.setAttribute("aria-busy", "true"); }
});

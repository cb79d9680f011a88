/* The notices banner's code (templates/shared/notices.html): inline on the hub's and the
   portal's pages, a file of the TensorBoard page's own there (its policy allows no inline
   script). */
(function () {
  var box = document.getElementById("gp-notices");
  if (!box) { return; }
  var url = box.dataset.url;
  var levels = {info: "info", warning: "warning", danger: "danger"};
  function show(notices) {
    box.textContent = "";
    notices.forEach(function (notice) {
      var line = document.createElement("div");
      line.className = "alert alert-" + (levels[notice.level] || "info") + " gp-notice my-2 py-2";
      line.setAttribute("role", notice.level === "info" ? "status" : "alert");
      line.dataset.notice = notice.id;
      line.textContent = notice.text;
      box.appendChild(line);
    });
  }
  function look() {
    if (document.hidden) { return; }
    fetch(url, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (notices) { if (notices) { show(notices); } })
      .catch(function () {});
  }
  look();
  setInterval(look, 60000);
  document.addEventListener("visibilitychange", look);
})();

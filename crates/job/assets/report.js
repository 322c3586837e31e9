window.addEventListener("error", function (e) { document.body.dataset.error = String(e.message); });
window.addEventListener("load", function () {
  var plots = document.querySelectorAll("svg.plot"), drawn = 0;
  for (var i = 0; i < plots.length; i++) {
    var box = plots[i].getBBox();
    if (box.width > 0 && box.height > 0 && plots[i].childElementCount > 3) drawn++;
  }
  document.body.dataset.plots = String(plots.length);
  document.body.dataset.rendered = String(drawn);
  document.body.dataset.wide = String(document.documentElement.scrollWidth > window.innerWidth);
});

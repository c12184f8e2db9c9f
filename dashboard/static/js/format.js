/* How ids and times read on the page. */

/** A drone's label: "D2" for "2"; any other id as it is. */
export const label = (id) => (/^\d+$/.test(id) ? "D" + id : id);

/** Seconds as m:ss or h:mm:ss ("–" for none). */
export function fmtTime(s) {
  if (s === undefined || s === null) return "–";
  s = Math.floor(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(sec).padStart(2, "0");
}

"""svgplot -- the few plots the benchmark report needs, written as plain SVG (no plotting
library on the machines that render the report). Log axes only where the data span decades.

  bars(path, title, labels, series, ylabel)      grouped bars, log y; series = [(name, values)]
  scatter(path, title, series, xlabel, ylabel)   log-log points; series = [(name, [(x, y)])]
  lines(path, title, series, xlabel, ylabel)     linear x, log y; series = [(name, [(x, y)])]
Missing values (None, <= 0 on a log axis) are left out, never drawn as zero."""
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf"]
W, H, L, R, T, B = 900, 420, 80, 200, 40, 110


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _logrange(vals):
    v = [x for x in vals if x is not None and x > 0]
    if not v:
        return 0.0, 1.0
    lo, hi = math.floor(math.log10(min(v))), math.ceil(math.log10(max(v)))
    return float(lo), float(hi if hi > lo else lo + 1)


def _frame(title, ylabel, lo, hi, xlabel=""):
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' "
           "font-family='sans-serif' font-size='11'>",
           "<rect width='100%' height='100%' fill='white'/>",
           f"<text x='{W / 2}' y='20' text-anchor='middle' font-size='14'>{_esc(title)}</text>",
           f"<text x='14' y='{(T + H - B) / 2}' transform='rotate(-90 14 {(T + H - B) / 2})' "
           f"text-anchor='middle'>{_esc(ylabel)}</text>"]
    if xlabel:
        out.append(f"<text x='{(L + W - R) / 2}' y='{H - 10}' text-anchor='middle'>{_esc(xlabel)}</text>")
    for e in range(int(lo), int(hi) + 1):
        y = _ymap(10.0 ** e, lo, hi)
        out.append(f"<line x1='{L}' x2='{W - R}' y1='{y:.1f}' y2='{y:.1f}' stroke='#ddd'/>")
        out.append(f"<text x='{L - 6}' y='{y + 4:.1f}' text-anchor='end'>1e{e}</text>")
    out.append(f"<rect x='{L}' y='{T}' width='{W - L - R}' height='{H - T - B}' fill='none' stroke='black'/>")
    return out


def _ymap(v, lo, hi):
    return T + (H - T - B) * (1 - (math.log10(v) - lo) / (hi - lo))


def _legend(out, names):
    for k, name in enumerate(names):
        y = T + 14 * k + 6
        out.append(f"<rect x='{W - R + 10}' y='{y - 8}' width='10' height='10' fill='{COLORS[k % len(COLORS)]}'/>")
        out.append(f"<text x='{W - R + 25}' y='{y + 1}'>{_esc(name)}</text>")


def bars(path, title, labels, series, ylabel):
    lo, hi = _logrange([v for _, vals in series for v in vals])
    out = _frame(title, ylabel, lo, hi)
    ng, ns = max(1, len(labels)), max(1, len(series))
    gw = (W - L - R) / ng
    bw = gw * 0.8 / ns
    for g, lab in enumerate(labels):
        x0 = L + g * gw + gw * 0.1
        for s, (_, vals) in enumerate(series):
            v = vals[g]
            if v is None or v <= 0:
                continue
            y = _ymap(v, lo, hi)
            out.append(f"<rect x='{x0 + s * bw:.1f}' y='{y:.1f}' width='{bw:.1f}' height='{H - B - y:.1f}' "
                       f"fill='{COLORS[s % len(COLORS)]}'><title>{_esc(lab)}: {v:.4g}</title></rect>")
        xc = x0 + gw * 0.4
        out.append(f"<text x='{xc:.1f}' y='{H - B + 8}' transform='rotate(60 {xc:.1f} {H - B + 8})'>"
                   f"{_esc(lab[:24])}</text>")
    _legend(out, [n for n, _ in series])
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def _xy_plot(path, title, series, xlabel, ylabel, logx):
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts]
    lo, hi = _logrange(ys)
    if logx:
        xlo, xhi = _logrange(xs)
        xmap = lambda x: L + (W - L - R) * (math.log10(x) - xlo) / (xhi - xlo)
    else:
        xlo, xhi = 0.0, float(max(xs) if xs else 1) or 1.0
        xmap = lambda x: L + (W - L - R) * (x - xlo) / (xhi - xlo)
    out = _frame(title, ylabel, lo, hi, xlabel)
    if logx:
        for e in range(int(xlo), int(xhi) + 1):
            x = xmap(10.0 ** e)
            out.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{T}' y2='{H - B}' stroke='#eee'/>")
            out.append(f"<text x='{x:.1f}' y='{H - B + 16}' text-anchor='middle'>1e{e}</text>")
    else:
        for k in range(6):
            xv = xlo + (xhi - xlo) * k / 5
            out.append(f"<text x='{xmap(xv):.1f}' y='{H - B + 16}' text-anchor='middle'>{xv:.0f}</text>")
    for s, (name, pts) in enumerate(series):
        col = COLORS[s % len(COLORS)]
        good = [(x, y) for x, y in pts if y is not None and y > 0 and (not logx or x > 0)]
        if not logx and len(good) > 1:
            d = " ".join(f"{xmap(x):.1f},{_ymap(y, lo, hi):.1f}" for x, y in good)
            out.append(f"<polyline points='{d}' fill='none' stroke='{col}' stroke-width='1.5'/>")
        else:
            for x, y in good:
                out.append(f"<circle cx='{xmap(x):.1f}' cy='{_ymap(y, lo, hi):.1f}' r='4' fill='{col}'>"
                           f"<title>{_esc(name)}: ({x:.4g}, {y:.4g})</title></circle>")
    _legend(out, [n for n, _ in series])
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def scatter(path, title, series, xlabel, ylabel):
    _xy_plot(path, title, series, xlabel, ylabel, True)


def lines(path, title, series, xlabel, ylabel):
    _xy_plot(path, title, series, xlabel, ylabel, False)

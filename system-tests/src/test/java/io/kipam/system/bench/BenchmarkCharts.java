package io.kipam.system.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Writes a benchmark's report: its printed table as {@code <name>.txt}, and two charts drawn by
 * JFreeChart: the latency CDF of every series ({@code <name>-latency-cdf.png}) and the calls
 * completed over time ({@code <name>-completions.png}, whose slope is the throughput). Both time
 * axes are logarithmic, so a system a hundred times slower fits next to the floor.
 */
public final class BenchmarkCharts {

  /** One phase: each call's latency (ms) and when it finished (s since the phase started). */
  public record Series(String name, List<Double> latenciesMs, List<Double> finishedAtSeconds) {}

  private BenchmarkCharts() {}

  public static void write(Path dir, String name, String report, List<Series> series)
      throws IOException {
    System.setProperty("java.awt.headless", "true");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(name + ".txt"), report);
    ChartUtils.saveChartAsPNG(
        dir.resolve(name + "-latency-cdf.png").toFile(), latencyCdf(series), 960, 560);
    ChartUtils.saveChartAsPNG(
        dir.resolve(name + "-completions.png").toFile(), completions(series), 960, 560);
    System.out.printf("report and charts written to %s%n", dir.toAbsolutePath().normalize());
  }

  /**
   * A chart of calls served over time, one line a series ({@code name} to each call's finish, in
   * seconds), written as a PNG to {@code file}; the time axis logarithmic, so that a start of
   * seconds fits beside one of tens of seconds.
   */
  public static void served(
      Path file, String title, String timeAxis, java.util.Map<String, List<Double>> series)
      throws IOException {
    System.setProperty("java.awt.headless", "true");
    Files.createDirectories(file.getParent());
    XYSeriesCollection data = new XYSeriesCollection();
    series.forEach(
        (name, finished) -> {
          List<Double> sorted = new ArrayList<>(finished);
          Collections.sort(sorted);
          XYSeries done = new XYSeries(name);
          for (int i = 0; i < sorted.size(); i++) {
            done.add(Math.max(0.05, sorted.get(i)), i + 1);
          }
          data.addSeries(done);
        });
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            title, timeAxis, "served", data, PlotOrientation.VERTICAL, true, false, false);
    LogAxis time = new LogAxis(timeAxis + ", log scale");
    time.setNumberFormatOverride(new java.text.DecimalFormat("0.##"));
    ((XYPlot) chart.getPlot()).setDomainAxis(time);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 960, 560);
    System.out.printf("chart written to %s%n", file.toAbsolutePath().normalize());
  }

  /**
   * One XY series a run: its values sorted, the n-th (from 1) at x = the value (at least {@code
   * floor}, for a log axis) and y = n, or n over the count when {@code asFraction}.
   */
  private static XYSeriesCollection sortedSeries(
      List<Series> series,
      java.util.function.Function<Series, List<Double>> values,
      double floor,
      boolean asFraction) {
    XYSeriesCollection data = new XYSeriesCollection();
    for (Series s : series) {
      List<Double> sorted = new ArrayList<>(values.apply(s));
      Collections.sort(sorted);
      XYSeries xy = new XYSeries(s.name());
      for (int i = 0; i < sorted.size(); i++) {
        double n = i + 1;
        xy.add(Math.max(floor, sorted.get(i)), asFraction ? n / sorted.size() : n);
      }
      data.addSeries(xy);
    }
    return data;
  }

  /**
   * A line chart with a legend, its x axis logarithmic: {@code xLabel} ends in its unit in
   * parentheses, to which ", log scale" is added.
   */
  private static JFreeChart logXChart(
      String title, String xLabel, String yLabel, XYSeriesCollection data) {
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
    String logXLabel = xLabel.substring(0, xLabel.length() - 1) + ", log scale)";
    ((XYPlot) chart.getPlot()).setDomainAxis(new LogAxis(logXLabel));
    return chart;
  }

  private static JFreeChart latencyCdf(List<Series> series) {
    XYSeriesCollection data = sortedSeries(series, Series::latenciesMs, 0.1, true);
    return logXChart("ADD latency, cumulative", "latency (ms)", "fraction of ADDs", data);
  }

  private static JFreeChart completions(List<Series> series) {
    XYSeriesCollection data = sortedSeries(series, Series::finishedAtSeconds, 0.001, false);
    String title = "ADDs completed over time (the slope is the throughput)";
    return logXChart(title, "time since the phase started (s)", "ADDs completed", data);
  }
}

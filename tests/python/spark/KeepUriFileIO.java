// Diagnostics only (FLOE_SPARK_KEEP_FILE_URIS=1, tests/python/spark_engine.py): Iceberg Java's
// HadoopFileIO, except that every file's location is spelt `file:///abs` (as Floe writes it),
// whether it was asked for so or as Hadoop's `file:/abs` (a Hadoop Path made it), where
// HadoopFileIO gives `file:/abs`. With it, a Floe that refuses `file:/` URIs can
// still be tested past that refusal; the Spark tests normally run without it.
package floe.tests;

import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

public class KeepUriFileIO extends HadoopFileIO {
  public KeepUriFileIO() {
    super();
  }

  @Override
  public InputFile newInputFile(String path) {
    return new In(super.newInputFile(path), triple(path));
  }

  static String triple(String path) {
    if (path.startsWith("file:/") && !path.startsWith("file://")) {
      return "file://" + path.substring("file:".length());
    }
    return path;
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    return new In(super.newInputFile(path, length), triple(path));
  }

  @Override
  public OutputFile newOutputFile(String path) {
    return new Out(super.newOutputFile(path), triple(path));
  }

  static final class In implements InputFile {
    private final InputFile file;
    private final String location;

    In(InputFile file, String location) {
      this.file = file;
      this.location = location;
    }

    @Override
    public long getLength() {
      return file.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      return new Stream(file.newStream());
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public boolean exists() {
      return file.exists();
    }
  }

  // A plain stream (not Hadoop's wrapper, which Parquet's reader unwraps and whose cleaner then
  // closes the unwrapped stream under it).
  static final class Stream extends SeekableInputStream {
    private final SeekableInputStream in;

    Stream(SeekableInputStream in) {
      this.in = in;
    }

    @Override
    public long getPos() throws java.io.IOException {
      return in.getPos();
    }

    @Override
    public void seek(long pos) throws java.io.IOException {
      in.seek(pos);
    }

    @Override
    public int read() throws java.io.IOException {
      return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws java.io.IOException {
      return in.read(b, off, len);
    }

    @Override
    public void close() throws java.io.IOException {
      in.close();
    }
  }

  static final class Out implements OutputFile {
    private final OutputFile file;
    private final String location;

    Out(OutputFile file, String location) {
      this.file = file;
      this.location = location;
    }

    @Override
    public PositionOutputStream create() {
      return file.create();
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return file.createOrOverwrite();
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public InputFile toInputFile() {
      return new In(file.toInputFile(), location);
    }
  }
}

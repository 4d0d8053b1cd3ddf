package bench.math;

public class Matrix {
    private final double[][] cells;
    private final int rows;
    private final int cols;

    public Matrix(int rows, int cols) {
        this.rows = rows;
        this.cols = cols;
        this.cells = new double[rows][cols];
    }

    public static Matrix identity(int n) {
        Matrix m = new Matrix(n, n);
        for (int i = 0; i < n; i++) {
            m.set(i, i, 1.0);
        }
        return m;
    }

    public double get(int r, int c) {
        return cells[r][c];
    }

    public void set(int r, int c, double value) {
        cells[r][c] = value;
    }

    public Matrix multiply(Matrix other) {
        if (cols != other.rows) {
            throw new IllegalArgumentException();
        }
        Matrix out = new Matrix(rows, other.cols);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < other.cols; j++) {
                double sum = 0.0;
                for (int k = 0; k < cols; k++) {
                    sum += cells[i][k] * other.get(k, j);
                }
                out.set(i, j, sum);
            }
        }
        return out;
    }

    public Matrix transpose() {
        Matrix out = new Matrix(cols, rows);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                out.set(j, i, cells[i][j]);
            }
        }
        return out;
    }

    public double trace() {
        double total = 0.0;
        for (int i = 0; i < Math.min(rows, cols); i++) {
            total += cells[i][i];
        }
        return total;
    }
}

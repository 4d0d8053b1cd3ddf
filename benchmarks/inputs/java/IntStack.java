package bench.collections;

public class IntStack {
    private int[] items;
    private int size;

    public IntStack(int capacity) {
        items = new int[capacity];
        size = 0;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public int size() {
        return size;
    }

    private void grow() {
        int[] bigger = new int[items.length * 2 + 1];
        for (int i = 0; i < size; i++) {
            bigger[i] = items[i];
        }
        items = bigger;
    }

    public void push(int value) {
        if (size == items.length) {
            grow();
        }
        items[size] = value;
        size++;
    }

    public int pop() {
        if (isEmpty()) {
            throw new IllegalStateException();
        }
        size--;
        return items[size];
    }

    public int peek() {
        if (isEmpty()) {
            throw new IllegalStateException();
        }
        return items[size - 1];
    }

    public static int evaluatePostfix(char[] tokens) {
        IntStack stack = new IntStack(4);
        for (char c : tokens) {
            if (c >= '0' && c <= '9') {
                stack.push(c - '0');
            } else {
                int right = stack.pop();
                int left = stack.pop();
                switch (c) {
                    case '+': stack.push(left + right); break;
                    case '-': stack.push(left - right); break;
                    case '*': stack.push(left * right); break;
                    default: stack.push(left / right);
                }
            }
        }
        return stack.pop();
    }
}

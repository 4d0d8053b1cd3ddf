package bench.collections;

class Node {
    int value;
    Node next;

    Node(int value, Node next) {
        this.value = value;
        this.next = next;
    }
}

public class LinkedList {
    private Node head;
    private int length;

    public void addFirst(int value) {
        head = new Node(value, head);
        length++;
    }

    public void addLast(int value) {
        if (head == null) {
            addFirst(value);
            return;
        }
        Node current = head;
        while (current.next != null) {
            current = current.next;
        }
        current.next = new Node(value, null);
        length++;
    }

    public boolean contains(int value) {
        for (Node n = head; n != null; n = n.next) {
            if (n.value == value) {
                return true;
            }
        }
        return false;
    }

    public void reverse() {
        Node previous = null;
        Node current = head;
        while (current != null) {
            Node next = current.next;
            current.next = previous;
            previous = current;
            current = next;
        }
        head = previous;
    }

    public int sum() {
        int total = 0;
        Node n = head;
        while (n != null) {
            total += n.value;
            n = n.next;
        }
        return total;
    }

    public int size() {
        return length;
    }
}

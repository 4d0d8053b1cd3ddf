package bench.bank;

import java.util.ArrayList;
import java.util.List;

interface Account {
    long balance();
    void deposit(long amount);
    boolean withdraw(long amount);
}

class SavingsAccount implements Account {
    private long cents;
    private final double rate;

    SavingsAccount(double rate) {
        this.rate = rate;
    }

    public long balance() {
        return cents;
    }

    public void deposit(long amount) {
        if (amount <= 0) {
            throw new IllegalArgumentException();
        }
        cents += amount;
    }

    public boolean withdraw(long amount) {
        if (amount > cents) {
            return false;
        }
        cents -= amount;
        return true;
    }

    public void addInterest() {
        cents = Math.round(cents * (1 + rate));
    }
}

public class Accounts {
    private final List<Account> accounts = new ArrayList<>();

    public void open(Account account) {
        accounts.add(account);
    }

    public long total() {
        long sum = 0;
        for (Account a : accounts) {
            sum += a.balance();
        }
        return sum;
    }

    public int transfer(Account from, Account to, long amount) {
        synchronized (this) {
            if (!from.withdraw(amount)) {
                return -1;
            }
            to.deposit(amount);
        }
        return accounts.size();
    }
}
